"""Golden-set evaluation: cases, a runner over the real CLI, per-layer metrics, a naive baseline.

Three layers are scored separately and never merged into one number (docs/design.md section 11):
the retriever (did the required evidence reach the candidates), the pack (was only the right
evidence admitted) and the answer (are the claims bound to that evidence, is the status right).
"""
