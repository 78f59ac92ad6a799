"""``POST /v1/rerank``: a query and documents, answered with the documents in order of relevance.

The request and answer are the shape vLLM serves (Jina's and Cohere's): ``{"query",
"documents", "top_n", "return_documents"}`` in, ``{"id", "model", "usage": {"total_tokens"},
"results": [{"index", "document": {"text"}, "relevance_score"}]}`` out, best first. A
cross-encoder reads every (query, document) pair, so the pass has the documents as its batch
and the pairs' words as its tokens. The score is the share of a document's distinct words that
the query has (a load test reads the order's length, not its wisdom): deterministic, and 1.0 for
a document made of the query's words.
"""

from __future__ import annotations

from collections.abc import Mapping

import orjson

from llmload.sim.embeddings import BadInput, Pass
from llmload.sim.jsonvalue import JSON


def _documents(given: JSON) -> list[str]:
    if not isinstance(given, list) or not given:
        raise BadInput("documents must be a non-empty list")
    texts = []
    for document in given:
        text = document.get("text") if isinstance(document, Mapping) else document
        if not isinstance(text, str):
            raise BadInput("each document must be a string or an object with text")
        texts.append(text)
    return texts


def score(query: str, document: str) -> float:
    words = set(document.split())
    return round(len(words & set(query.split())) / len(words), 6) if words else 0.0


def rerank_pass(body: JSON) -> Pass:
    if not isinstance(body, dict):
        raise BadInput("body must be a JSON object")
    query = body.get("query")
    if not isinstance(query, str) or not query:
        raise BadInput("query must be a non-empty string")
    documents = _documents(body.get("documents"))
    top_n = body.get("top_n")
    if top_n is not None and (isinstance(top_n, bool) or not isinstance(top_n, int) or top_n < 1):
        raise BadInput("top_n must be a positive integer")
    keep = len(documents) if top_n is None else min(top_n, len(documents))
    with_text = body.get("return_documents", True) is not False
    asked = len(query.split())
    tokens = sum(asked + len(d.split()) for d in documents)

    def answer(model: str) -> bytes:
        ranked = sorted(range(len(documents)), key=lambda i: -score(query, documents[i]))[:keep]
        results: list[JSON] = []
        for i in ranked:
            result: dict[str, JSON] = {"index": i, "relevance_score": score(query, documents[i])}
            if with_text:
                result["document"] = {"text": documents[i]}
            results.append(result)
        usage: dict[str, JSON] = {"total_tokens": tokens}
        return orjson.dumps({"id": "rerank-sim", "model": model, "usage": usage, "results": results})

    return Pass(len(documents), tokens, answer)
