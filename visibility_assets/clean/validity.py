"""The texts that make an answer invalid before anything else is read: refusals, quoted API
errors and rate limits (the analyzer's validity rules, README "Analysis")."""

import re

EMPTY, REFUSAL, ERROR, IRRELEVANT = "empty", "refusal", "error", "irrelevant"

# 不便 declines ("不便透露", "不便作出评价"), but not as part of "并不便宜", "不便利" or "不便捷".
DECLINE_BUEBIAN = r"不便(?!宜|利|捷|于|携|之处|的)"
REFUSAL_TEXT = re.compile(
    r"抱歉|对不起|很遗憾|无法回答|无法提供|不能回答|不能提供|暂时无法|无法满足|无法协助|我不能|我无法|" + DECLINE_BUEBIAN + r"|不予评价|"
    r"不作评价|无法评价|无法给出|"
    r"i can't|i cannot|i can not|i'm unable|i am unable|i'm sorry|i am sorry|i won't be able|"
    r"unable to (?:help|assist|provide)|not able to (?:help|assist|provide)|can't (?:help|assist)|cannot (?:help|assist)"
)
STRONG_REFUSAL = re.compile(
    r"无法回答|无法提供|不能回答|不能提供|无法协助|无法帮|不能帮|无法为您|无法为你|不能为您|不能为你|" + DECLINE_BUEBIAN + r"|can't help|cannot help|can not help|can't assist|"
    r"cannot assist|unable to (?:help|assist|provide)|not able to (?:help|assist|provide)"
)
GOES_ON = re.compile(r"但可以|但是可以|不过可以|以下|下面|如下|however|but here|here's|here is|that said", re.I)
ERROR_TEXT = re.compile(
    r"服务器繁忙|服务繁忙|系统繁忙|请稍后再试|请稍后重试|网络错误|网络异常|系统错误|服务异常|内部错误|请求过于频繁|请求失败|"
    r"rate limit|too many requests|internal server error|server error|service unavailable|bad gateway|"
    r"gateway timeout|error code|\berror\b|exception|timed? ?out|overloaded|try again later|错误码|错误代码|频率超限|"
    r"请求超限|调用超限|额度不足|配额|限流|暂时不可用|quota"
)
# Error text that no answer opens with, whatever its length or the brands it names: a JSON error
# body, "Error code: 429 - {...}", "API Error: 503 Service Unavailable", "HTTP 502 Bad Gateway".
ERROR_OPENING = re.compile(
    r"\W{0,3}(?:\{\s*[\"']?error[\"']?\s*:|(?:api\s*|http\s*)?error(?:\s*code)?\s*[:=-]?\s*[45]\d\d\b|"
    r"(?:api\s*)?error\s*:|http(?:/[\d.]+)?\s*[45]\d\d\b|[45]\d\d\s*[:-]?\s*(?:too many requests|service unavailable|"
    r"internal server error|bad gateway|gateway timeout|forbidden|unauthorized)|(?:(?:请求|调用|服务)(?:错误|失败|异常)|错误)\s*[:(]|"
    r"(?:错误码|错误代码)\s*[:=]?\s*\d)")
# Error text anywhere in a short answer that names no brand: an API error code or field.
ERROR_MARKS = re.compile(
    r"rate_limit_exceeded|insufficient_quota|\"code\"\s*:\s*\"?[45]\d\d|'code'\s*:\s*'?[45]\d\d|"
    r"(?:错误码|错误代码|error code|status code|状态码)\s*[:=]?\s*[45]\d\d")
ERROR_OPENING_MAX = 1500
