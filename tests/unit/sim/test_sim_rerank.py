"""The simulator's /v1/rerank: vLLM's shape, its order, its limits and its refusals."""

from __future__ import annotations

import orjson
import pytest

from llmload.sim.embeddings import BadInput
from llmload.sim.rerank import rerank_pass, score


def test_documents_come_back_best_first_with_the_pairs_as_one_pass() -> None:
    body = {"query": "a b c", "documents": ["x y", {"text": "a b"}, "a b c"], "top_n": 2}
    work = rerank_pass(body)
    assert (work.batch, work.tokens) == (3, 3 * 3 + 2 + 2 + 3)
    answer = orjson.loads(work.answer("m"))
    assert answer["usage"] == {"total_tokens": work.tokens} and answer["model"] == "m"
    # a tie keeps the request's order
    assert [(r["index"], r["relevance_score"], r["document"]["text"]) for r in answer["results"]] == [
        (1, 1.0, "a b"),
        (2, 1.0, "a b c"),
    ]


def test_return_documents_false_leaves_the_text_out() -> None:
    answer = orjson.loads(
        rerank_pass({"query": "q", "documents": ["q"], "return_documents": False}).answer("m")
    )
    assert answer["results"] == [{"index": 0, "relevance_score": 1.0}]


def test_the_score_is_the_share_of_a_documents_words_the_query_has() -> None:
    assert score("a b", "a c") == 0.5 and score("a", "") == 0.0 and score("a", "b") == 0.0


@pytest.mark.parametrize(
    "body",
    [
        [],
        {"documents": ["a"]},
        {"query": "", "documents": ["a"]},
        {"query": "q", "documents": []},
        {"query": "q", "documents": [3]},
        {"query": "q", "documents": ["a"], "top_n": 0},
        {"query": "q", "documents": ["a"], "top_n": True},
    ],
)
def test_malformed_requests_are_refused(body: object) -> None:
    with pytest.raises(BadInput):
        rerank_pass(body)  # type: ignore[arg-type]
