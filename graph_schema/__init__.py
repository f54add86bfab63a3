"""The typed Knowledge Graph: type vocabulary, bundle model and loader, validation, the
versioned record writer, constraints/indexes, hashing and the synthetic generator.

Entry points (docs/kg-model.md):

- `graph_schema.bundle.load_bundle(path) -> LoadedBundle` and the `Bundle` models
- `graph_schema.validate.validate_bundle(loaded, existing, now=...) -> list[BundleProblem]`
- `graph_schema.writer.ingest_bundle(driver, loaded) -> IngestReport` (raises `BundleRejected`;
  `graph_schema.import_sources.ImportSourceInBundle` for a bundle on an import's source)
- `graph_schema.schema_ddl.apply_schema(driver) -> SchemaReport`
- `graph_schema.hashing.content_hash(properties)`
- `graph_schema.purge.purge_content(driver, tenant, id) -> PurgeReport`
- `graph_schema.synthetic.generate_bundle(services, seed) -> Bundle`
"""
