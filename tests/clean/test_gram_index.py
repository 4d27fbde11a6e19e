import numpy as np

from visibility_assets.clean.gram_index import GramIndex


def test_every_key_finds_its_row_and_a_key_not_in_the_set_finds_none():
    rng = np.random.default_rng(7)
    keys = np.unique(rng.integers(0, 2**63, 5000, dtype=np.uint64))
    rng.shuffle(keys)
    strangers = np.setdiff1d(rng.integers(0, 2**63, 3000, dtype=np.uint64), keys)
    index = GramIndex(keys)
    assert index.rows(keys).tolist() == list(range(len(keys)))
    assert (index.rows(strangers) == -1).all()


def test_keys_that_want_one_slot_each_find_their_own():
    # Keys equal in their high bits and apart only in the low ones are the n-grams' shape (code points
    # in 21-bit fields): many share a first slot, and each must still be told from the others.
    keys = (np.arange(1, 300, dtype=np.uint64) << np.uint64(42)) | np.uint64(65)
    keys = np.concatenate([keys, np.arange(1, 300, dtype=np.uint64)])
    index = GramIndex(keys)
    queries = np.concatenate([keys[::-1], keys + np.uint64(1 << 21)])
    expected = list(range(len(keys)))[::-1] + [-1] * len(keys)
    assert index.rows(queries).tolist() == expected


def test_an_empty_set_finds_nothing():
    assert GramIndex(np.zeros(0, dtype=np.uint64)).rows(np.array([1, 2], dtype=np.uint64)).tolist() == [-1, -1]
