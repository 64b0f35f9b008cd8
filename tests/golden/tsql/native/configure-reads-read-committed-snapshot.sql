-- native: configure_reads read-committed snapshot?
SELECT is_read_committed_snapshot_on FROM sys.databases WHERE database_id = DB_ID();
