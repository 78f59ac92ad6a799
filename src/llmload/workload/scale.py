"""Words to the server's tokens: what ``--tokenize`` calibrates and synthetic prompts obey.

Synthetic prompts are made of words. A server counts tokens: about ``per_word`` per word of the
generator's vocabulary, plus a part that does not grow with the prompt (the salt's several
tokens, a BOS, the chat template's role markers). Both are measured once per process against
the server's own tokenizer (``target/tokenize.py``); a prompt asked to be ``T`` tokens long then
gets ``(T - fixed) / per_word`` words.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from statistics import fmean

from llmload.errors import ConfigError

# The probe prompts: a few of each of two lengths, so the salt's varying token count averages out.
SHORT_WORDS, LONG_WORDS, SAMPLES = 16, 512, 3


@dataclass(frozen=True, slots=True)
class TokenScale:
    per_word: float  # tokens per word of the synthetic vocabulary
    fixed: float  # tokens of a prompt that do not depend on its length (salt, BOS, template)
    note: str | None = None  # what describe() says instead of the numbers (WORDS)

    def __post_init__(self) -> None:
        if not self.per_word > 0:
            raise ConfigError("--tokenize", self.per_word, "calibration found no tokens per word")

    def words_for(self, tokens: int) -> int:
        """Words of a prompt the server will count as ``tokens`` (at least one word)."""
        return max(1, round((tokens - self.fixed) / self.per_word))

    def describe(self) -> str:
        return self.note or f"{self.per_word:.3f} tokens per word + {self.fixed:.1f} per prompt"


# ``--tokenize auto`` where the server offers no /tokenize: a word per token asked, the prompts
# ``off`` builds (``words_for`` is the identity on the lengths a prompt can ask, 1 and more).
WORDS = TokenScale(1.0, 0.0, "words (the server offers no /tokenize)")


def calibrate(
    count: Callable[[str], int],
    sample: Callable[[int, int], str],
    served: Callable[[str], int | None],
) -> tuple[TokenScale, str | None]:
    """Fit ``tokens = fixed + per_word * words`` to the generator's own prompts.

    ``count`` is the tokenizer (the server's ``/tokenize`` or a tokenizer.json), ``sample(words,
    i)`` the ``i``-th synthetic prompt of that many words, ``served(text)`` the server's
    ``usage.prompt_tokens`` for one chat request of ``text`` (None: unknown). What the template
    adds is the served count less the tokenizer's; unknown, it is taken as 0 and said.
    """
    shorts = [sample(SHORT_WORDS, i) for i in range(SAMPLES)]
    short_counts = [count(text) for text in shorts]
    long = fmean(count(sample(LONG_WORDS, i)) for i in range(SAMPLES))
    per_word = (long - fmean(short_counts)) / (LONG_WORDS - SHORT_WORDS)
    fixed = fmean(short_counts) - per_word * SHORT_WORDS
    # A short probe: its prefill is what a slow server spends before the run can start.
    usage = served(shorts[0])
    if usage is None:
        warning = (
            "--tokenize: the server's answer to a probe request had no usage.prompt_tokens, so "
            "prompts are built to the tokenizer's count without the chat template's tokens"
        )
        return TokenScale(per_word, fixed), warning
    return TokenScale(per_word, fixed + usage - short_counts[0]), None
