"""The texts that make an answer invalid before anything else is read: refusals, quoted API
errors and rate limits (the analyzer's validity rules, docs/analysis.md)."""

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
# A whole error document where the answer should be: a program's traceback or stack trace, or
# an HTML error or block page (a gateway's 502, a firewall's page), whatever brands it names.
TRACE_OPENING = re.compile(
    r"\W{0,3}(?:traceback \(most recent call last\)|exception in thread |"
    r"[a-z_$][\w$]*(?:\.[\w$]+)+(?:exception|error)(?::|\s*\n|\s*$)|"
    r"(?:[\w.]+(?:exception|error): [^\n]*\n\s+at [\w$.<>]+\())")
HTML_OPENING = re.compile(r"\W{0,3}(?:<!doctype html|<html[\s>]|<\?xml)")
HTML_ERROR_MARK = re.compile(
    r"<title>[^<]*(?:[45]\d\d|error|unavailable|forbidden|denied|blocked|not found|错误|拦截|阻断|不可用)|"
    r"<h[1-3]>[^<]*(?:[45]\d\d|error|unavailable|forbidden|denied|blocked|拦截|阻断|不可用)|"
    r"bad gateway|service unavailable|access denied|访问被阻断|访问被拦截|web应用防火墙|\bwaf\b")
ERROR_DOCUMENT_MAX = 20_000
# Declining, in a refusal's opening: with nothing offered after it, a long refusal that repeats
# the question's brands is still a refusal.
DECLINES = re.compile(
    r"无法(?:对|就|为|给出|提供|做出|判断|比较|推荐|回答|评价)|不能(?:对|就|为|给出|提供|推荐|回答)|" + DECLINE_BUEBIAN + r"|"
    r"can(?:'t|not| not) (?:help|assist|provide|give|rank|recommend|compare|tell|advise|say|predict|make)|"
    r"(?:unable|not able) to (?:help|assist|provide|give|rank|recommend|compare|tell|advise)|won't be able to")
LONG_REFUSAL_MAX = 1200
# The platform's moderation declines, not the model: a notice that may quote the question's brands.
MODERATION = re.compile(r"(?:may|might) violate our (?:usage|content) polic|flagged by our (?:automated )?moderation|"
                        r"violates? our (?:usage|content) polic")
# Only the question translated ("Translation: …", "您的问题翻译成中文是：…"): no answer follows.
TRANSLATION_LABEL = re.compile(r"\W{0,3}(?:translation|translated(?: question)?|译文|(?:以下是)?(?:您|你)?的?问题[^\n:]{0,12}翻译"
                               r"[^\n:]{0,8}|翻译(?:成|为)[^\n:]{0,8})\s*:")
TRANSLATION_MAX = 240


def only_a_translation(body: str) -> bool:
    """The body is a label saying it translates, then one short sentence: the question again."""
    label = TRANSLATION_LABEL.match(body)
    if not label:
        return False
    rest = body[label.end():].strip()
    return 0 < len(rest) <= TRANSLATION_MAX and "\n" not in rest


def declines(opening: str) -> bool:
    return bool(DECLINES.search(opening))


def error_document(body: str) -> bool:
    """A traceback, a stack trace or an HTML error page stands where the answer should be."""
    if len(body) > ERROR_DOCUMENT_MAX:
        return False
    if TRACE_OPENING.match(body):
        return True
    return bool(HTML_OPENING.match(body)) and bool(HTML_ERROR_MARK.search(body, 0, 4000))
