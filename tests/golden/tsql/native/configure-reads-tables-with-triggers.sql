-- native: configure_reads tables with triggers
SELECT OBJECT_SCHEMA_NAME(parent_id), OBJECT_NAME(parent_id) FROM sys.triggers WHERE parent_class = 1 AND is_disabled = 0;
