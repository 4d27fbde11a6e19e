"""The judge: a language model that labels each tracked brand of an answer (config/judge.py)."""
