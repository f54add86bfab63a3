"""The typed Knowledge Graph and Context Graph models, constraints/indexes, and bundle loader."""
