"""Discovery: the brands the AIs offer as options that brands.yaml does not track, from the
analyzer (clean/untracked.py) to the untracked_brands model."""

from datetime import timedelta

import yaml
from pytest import approx

from tests.sql_models_harness import DAY, Warehouse, sample
from visibility_assets.clean.analyzer import Analyzer
from visibility_assets.config import load_catalog
from visibility_assets.core.partitions import Partition

CATALOG = """
brands:
  - {name: 阿里云, category: cloud, aliases: [阿里云, Aliyun]}
  - {name: 腾讯云, category: cloud, aliases: [腾讯云]}
  - {name: Salesforce, category: crm, aliases: [Salesforce]}
"""


def analyzer(tmp_path) -> Analyzer:
    path = tmp_path / "brands.yaml"
    path.write_text(CATALOG, encoding="utf-8")
    return Analyzer(load_catalog(path))


def untracked(tmp_path, answer: str, question: str = "有哪些云服务商？", category: str = "cloud") -> list:
    analysis = analyzer(tmp_path).analyze(answer, question, category)
    return [(n.name, n.other_form, n.list_rank) for n in analysis.untracked]


def test_options_the_catalog_does_not_know_are_named_with_their_rank_and_parenthesised_form(tmp_path):
    answer = ("国内主流的云服务商有：\n\n1. **阿里云**：市场份额最大。\n2. **七牛云（Qiniu）**：对象存储起家。\n"
              "3. **腾讯云**：游戏场景多。\n4. **ＵＣｌｏｕｄ**：中立云厂商。\n\n建议先试用再选择。")
    assert untracked(tmp_path, answer) == [("七牛云", "Qiniu", 2), ("UCloud", None, 4)]


def test_a_table_and_headings_offer_names_too_and_a_brand_of_another_category_is_not_untracked(tmp_path):
    table = ("| 平台 | 特点 |\n|---|---|\n| 阿里云 | 生态全 |\n| 天翼云 | 政企多 |\n| Salesforce | 不是云 |\n")
    assert untracked(tmp_path, "对比如下，供选择参考：\n\n" + table + "\n按预算选择即可。") == [("天翼云", None, 2)]
    headings = ("## 1. 阿里云\n适合大多数企业，价格适中。\n\n## 2. DigitalOcean\n适合开发者，价格透明。\n\n"
                "## 3. 腾讯云\n适合游戏，推荐选择。\n")
    assert untracked(tmp_path, headings) == [("DigitalOcean", None, 2)]


def test_categories_steps_sentences_and_combinations_are_not_names(tmp_path):
    answer = ("可以考虑以下选择：\n\n1. **阿里云**：最稳妥的选择。\n2. **开源方案**：自建成本低。\n"
              "3. 预算有限的团队，可以先用免费额度。\n4. **Zoom + Google Workspace**：组合使用。\n"
              "5. **Managed WordPress hosting**：省心。\n6. **Other options**：还有很多。\n7. **腾讯云**：游戏多。")
    assert untracked(tmp_path, answer) == []


def test_an_answer_without_an_option_list_or_an_invalid_one_offers_no_untracked_name(tmp_path):
    prose = "阿里云和七牛云都提供对象存储，七牛云的价格更低，阿里云的生态更全，按需要选择即可。"
    assert untracked(tmp_path, prose) == []
    assert untracked(tmp_path, "抱歉，我无法回答这个问题。") == []


def test_visibility_analyze_output_lists_untracked_names_as_written(tmp_path):
    got = analyzer(tmp_path).analyze("推荐：\n\n1. **阿里云**：稳。\n2. **Pipedrive CRM**：销售团队。", "选哪个？",
                                     "cloud").as_json("a1")
    assert got["untracked"] == ["Pipedrive CRM"]


# --- the model -------------------------------------------------------------------------------------

def name(key: str, name_: str, day=DAY, platform="deepseek", rank=2, other=None, category="cloud") -> dict:
    from visibility_assets.clean.untracked import untracked_key
    return {"request_key": key, "date": day, "platform": platform, "category": category, "name": name_,
            "name_key": untracked_key(name_), "other_form": other, "other_key": untracked_key(other) if other else None,
            "list_rank": rank}


def test_untracked_brands_groups_spellings_counts_answers_and_keeps_the_first_day(tmp_path):
    warehouse = Warehouse()
    before = DAY - timedelta(days=1)
    warehouse.insert("cleaned_samples", [sample(f"d{i}", category="cloud") for i in range(5)]
                     + [sample("p1", before, category="cloud"), sample("x", category="cloud", valid=False,
                                                                        invalid_reason="refusal")])
    warehouse.insert("sample_untracked_names", [
        name("p1", "七牛云", before, rank=3),
        name("d0", "七牛云", other="Qiniu", rank=4), name("d1", "Qiniu", rank=2), name("d2", "七牛云", rank=5),
        name("d3", "UCloud"), name("d4", "Ucloud", rank=1),
    ])
    partitions = [Partition(DAY, "deepseek"), Partition(before, "deepseek")]
    rows = {(r["date"], r["name"]): r for r in warehouse.build("untracked_brands", partitions)}
    qiniu = rows[(DAY, "七牛云")]
    assert (qiniu["answers"], qiniu["valid_answers"], qiniu["best_rank"], qiniu["first_seen"]) == (3, 5, 2, before)
    assert qiniu["aliases"] == ["七牛云", "Qiniu"]
    assert qiniu["answer_share"] == approx(3 / 5)
    assert rows[(before, "七牛云")]["answers"] == 1
    ucloud = rows[(DAY, "UCloud")]
    assert (ucloud["answers"], ucloud["first_seen"], ucloud["aliases"]) == (2, DAY, ["UCloud"])
    assert len(rows) == 3
    assert not any(warehouse.failing_checks(partitions).values())


def test_the_brands_yaml_line_is_a_valid_catalog_entry(tmp_path):
    warehouse = Warehouse()
    warehouse.insert("cleaned_samples", [sample("d0", category="cloud")])
    warehouse.insert("sample_untracked_names", [name("d0", 'Acme: "Cloud"', other="艾克美")])
    (row,) = warehouse.build("untracked_brands", [Partition(DAY, "deepseek")])
    path = tmp_path / "brands.yaml"
    path.write_text("brands:\n  " + row["brands_yaml"] + "\n", encoding="utf-8")
    (brand,) = load_catalog(path).brands
    assert (brand.name, brand.category, brand.aliases) == ('Acme: "Cloud"', "cloud", ('Acme: "Cloud"', "艾克美"))
    assert yaml.safe_load(row["brands_yaml"]) == [{"name": 'Acme: "Cloud"', "category": "cloud",
                                                   "aliases": ['Acme: "Cloud"', "艾克美"]}]


# --- sources the platform retrieved but the answer does not cite ---------------------------------

def test_a_platform_source_is_cited_when_the_text_marks_its_number_and_unknown_when_it_marks_none(tmp_path):
    from visibility_assets.clean.samples import RawAnswer, SampleCleaner
    path = tmp_path / "brands.yaml"
    path.write_text(CATALOG, encoding="utf-8")
    cleaner = SampleCleaner(load_catalog(path), "run")
    urls = ("https://a.example/1", "https://b.example/2", "https://c.example/3")

    def cited(text: str, indexes=(1, 2, 3)) -> dict:
        answer = RawAnswer("k", "2026-11-30", "ernie", "q1", "有哪些云服务商？", "cloud", 1, text,
                           platform_citations=urls, platform_indexes=indexes)
        return {(row["url"], row["source"]): row["cited"] for row in cleaner.clean([answer]).citations}

    marked = cited("推荐阿里云[1]，腾讯云也可以[ref_3]，详见 https://d.example/x 。")
    assert marked == {(urls[0], "platform"): True, (urls[1], "platform"): False, (urls[2], "platform"): True,
                      ("https://d.example/x", "text"): True}
    assert set(cited("推荐阿里云，腾讯云也可以。").values()) == {None}  # the text marks no source
    assert cited("推荐阿里云[1]。", indexes=(None, None, None))[(urls[0], "platform")] is None
