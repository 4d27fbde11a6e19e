"""Where each AI gets its facts: cited_domains over a real collection from the simulator."""

import pytest
import yaml

from tests.pipeline import materialize_for, read_warehouse
from visibility_assets.config import EXAMPLE_CONFIG_DIR, ConfigError, load_config

DAY = "2026-11-12"


@pytest.mark.dagster
def test_each_cited_domain_is_classed_counted_per_source_and_tied_to_the_brands_beside_it(
        visibility_home, config_dir, simulated):
    (config_dir / "domains.yaml").write_text(yaml.safe_dump({"domains": [{"domain": "sspai.com", "class": "news"}]}))
    # The canary prompts' answers cite sources too, but are not answers about brands.
    (config_dir / "canaries.yaml").write_text((EXAMPLE_CONFIG_DIR / "canaries.yaml").read_text(encoding="utf-8"),
                                              encoding="utf-8")
    own = {d: b.name for b in load_config().brands for d in b.domains}
    assert materialize_for(["cited_domains"], DAY, "ernie").success  # ernie searches
    with read_warehouse() as conn:
        rows = conn.execute("SELECT domain, source, domain_class, own_brand, citing_answers, valid_answers, share,"
                            " class_share, brands_mentioned FROM cited_domains").fetchall()
        valid = conn.execute("SELECT count(*) FROM cleaned_samples WHERE valid AND category <> 'canary'").fetchone()[0]
    by_key = {(domain, source): row for domain, source, *row in rows}
    assert {source for _, source in by_key} == {"platform", "text"}
    assert by_key[("zhihu.com", "platform")][0] == "qa_community"  # zhuanlan.zhihu.com and www.zhihu.com
    assert by_key[("sspai.com", "platform")][0] == "news"  # domains.yaml over the built-in table
    owned = [(domain, row) for (domain, _), row in by_key.items() if row[0] == "own"]
    assert owned and all(own[domain] == row[1] for domain, row in owned)
    tracked = {b.name for b in load_config().brands}
    for domain_class, _, citing, answers, share, class_share, brands in by_key.values():
        assert answers == valid and share == pytest.approx(citing / valid) and share <= class_share <= 1
        assert set(brands) <= tracked
    assert by_key[("zhihu.com", "platform")][-1]  # the brands named beside a source


def test_a_domain_table_entry_with_an_unknown_class_names_the_file_and_line(tmp_path):
    from tests.conftest import write_config

    directory = write_config(tmp_path / "config", 9)
    (directory / "domains.yaml").write_text("domains:\n  - {domain: zhihu.com, class: qa_community}\n"
                                            "  - {domain: example.com, class: blog}\n")
    with pytest.raises(ConfigError, match=r"domains.yaml line 3: .*class"):
        load_config(directory)
