"""Allowlisted Jinja2 Cypher templates, their manifest, the registry and the compiler."""
