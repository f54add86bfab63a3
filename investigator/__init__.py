"""Graph-backed investigation agent on Neo4j."""

__version__ = "0.1.0"
