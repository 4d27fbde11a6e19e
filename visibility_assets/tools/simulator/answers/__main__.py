"""Preview: python -m visibility_assets.tools.simulator.answers [seed] [platform]"""

import random
import sys

from visibility_assets.tools.simulator.answers import SimBrand, compose_answer

DEMO_BRANDS = (
    SimBrand("阿里云", ("阿里云", "Alibaba Cloud", "Aliyun"), ("aliyun.com",)),
    SimBrand("腾讯云", ("腾讯云", "Tencent Cloud"), ("cloud.tencent.com",)),
    SimBrand("华为云", ("华为云", "Huawei Cloud"), ("huaweicloud.com",)),
    SimBrand("AWS", ("AWS", "Amazon Web Services", "亚马逊云科技"), ("aws.amazon.com",)),
    SimBrand("Azure", ("Azure", "Microsoft Azure", "微软云"), ("azure.microsoft.com",)),
)

seed = int(sys.argv[1]) if len(sys.argv) > 1 else 1
platform = sys.argv[2] if len(sys.argv) > 2 else "deepseek"
for question in ("中小企业用哪家云数据库比较好？", "Which cloud platform is best for a startup?"):
    print(compose_answer(random.Random(seed), question, DEMO_BRANDS, platform, "2025-03-01"))
    print("=" * 60)
