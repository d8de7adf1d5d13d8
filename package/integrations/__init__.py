"""grammask.integrations: adapters to inference libraries and serving engines, each module
importing its library and imported only on request (`import grammask.integrations.vllm`); above
the compiler and the runtime, which never import them.

- `transformers`: `GrammaskLogitsProcessor`, a grammar per batch row of `generate`.
- `vllm`: `GrammaskBackend`, vLLM's `StructuredOutputBackend` (and its grammar objects).
- `sglang`: `GrammaskGrammarBackend`, SGLang's grammar backend (and `register()`).
- `requests`: what both engines send (a request kind and its text) compiled to a grammar.
"""
