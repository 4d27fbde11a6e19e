"""The words the sentiment rules read (clean/sentiment.py), zh and en: evaluative words, the
negators that turn them, and the contrasts and comparisons that weigh or turn them. The alias
matcher's pass locates them all (clean/cues.py); a Latin one counts only where it does not run
into a neighbouring word."""

POSITIVE_WORDS = (
    # zh: quality, value, recommendation
    "推荐", "首选", "值得", "优秀", "出色", "强大", "领先", "稳定", "可靠", "成熟", "完善", "丰富", "灵活", "便宜", "实惠",
    "性价比高", "高性价比", "性价比突出", "好用", "易用", "简单易用", "上手快", "流畅", "快速", "高效", "安全", "口碑好",
    "口碑不错", "好评", "靠谱", "不错", "很好", "最好", "优势", "亮点", "突出", "卓越", "全面", "领先地位", "表现好",
    "表现出色", "表现优异", "表现稳定", "体验好", "体验佳", "满意", "强劲", "顶尖", "一流", "省心", "贴心",
    "划算", "友好", "专业", "扎实", "可圈可点", "信赖", "广受欢迎", "受欢迎", "最佳", "优质", "出众", "加分",
    # comparatives and advice that favour a brand
    "更合适", "更好", "好得多", "更强", "最强", "顶级", "建议选", "建议用", "建议选择", "优先选", "优先考虑", "首推",
    "稳得多", "更稳", "有竞争力", "更有竞争力", "竞争力强", "更胜一筹", "胜出", "占优", "完胜", "值得入手", "值得购买",
    "做得好", "出彩", "领先一步", "性价比更高", "性价比最高", "上手更快",
    # en
    "recommend", "recommended", "best", "excellent", "great", "good", "strong", "reliable", "stable", "robust",
    "mature", "powerful", "leading", "leader", "affordable", "cheap", "cost-effective", "value for money",
    "easy to use", "user-friendly", "intuitive", "fast", "efficient", "secure", "popular", "well-regarded",
    "solid", "impressive", "outstanding", "top choice", "top pick", "standout", "flexible", "seamless", "polished", "praised",
    "worth", "ideal", "love", "favorite", "favourite", "comprehensive", "smooth", "generous",
    "better", "winner", "clear winner", "the edge", "strongest", "superior", "best-in-class", "class-leading",
    "stands out", "comfortable", "premium", "go with", "hard to beat", "tough to beat", "difficult to beat",
    "can't go wrong", "no-brainer", "safest", "safe bet", "safer bet", "second to none",
)
NEGATIVE_WORDS = (
    # zh: faults, cost, risk, advice against
    "不推荐", "不建议", "避免", "慎选", "慎用", "缺点", "短板", "不足", "劣势", "问题较多", "存在问题", "故障", "卡顿",
    "发热", "昂贵", "偏贵", "偏高", "较贵", "太贵", "价格高", "复杂", "难用", "落后", "不稳定", "宕机", "较差", "很差",
    "差劲", "表现一般", "体验一般", "一般般", "欠缺", "缺乏", "有限", "局限", "吐槽", "投诉", "风险较高", "有风险",
    "隐患", "担忧", "下滑", "收费高", "门槛高", "学习成本", "臃肿",
    "繁琐", "割裂", "拖沓", "慢", "迟缓", "失望", "糟糕", "争议", "负面", "不佳", "不足之处", "诟病", "被诟病", "槽点",
    "掉线", "漏洞", "泄露", "不够", "平庸", "鸡肋",
    # en
    "avoid", "skip", "steer clear", "expensive", "pricey", "costly", "overpriced", "complex", "complicated",
    "clunky", "slow", "buggy", "unstable", "unreliable", "outage", "outages", "downtime", "weak", "weakness",
    "drawback", "drawbacks", "downside", "downsides", "con", "cons", "limited", "lacking", "lacks", "poor",
    "bad", "worse", "worst", "disappointing", "frustrating", "confusing", "steep", "bloated", "criticized",
    "criticised", "complaints", "issues", "problems", "risk", "risky", "concern", "concerns", "lag", "laggy",
    "mediocre", "dated", "clumsy", "hard to",
)
# Words that turn the cue right after them (zh within a few characters, en within a few words).
NEGATORS_ZH = ("不", "没", "没有", "并不", "并非", "不太", "不算", "不够", "未", "无", "毫无", "缺少", "谈不上")
NEGATORS_EN = ("not", "no", "never", "isn't", "aren't", "wasn't", "doesn't", "don't", "didn't", "hardly",
               "without", "lack", "lacks", "nor", "n't")
NOT_NEGATORS_ZH = ("不仅", "不但", "不只", "不光", "不管", "不论", "无论", "无疑", "不得不", "不可或缺")
# After a contrast the clause weighs more than before it. At one place the longer word is the
# contrast (但是 over 但).
CONTRASTS = ("但是", "但", "不过", "然而", "可惜", "只是", "however", "but", "although", "though", "yet", "while")
# A comparison puts the cue on one side: "A 比 B 更稳定", "A is faster than B" (the brand after
# 比/than gets the opposite), "A 不如 B 稳定", "A is not as fast as B" (the brand before it does).
FLIPS_AFTER = ("比", "than")
FLIPS_BEFORE = ("不如", "比不上", "not as", "behind")
