-- native: init: is there setting WorkQueue LOCK_ESCALATION = DISABLE
SELECT 1 FROM sys.tables WHERE object_id = OBJECT_ID(?) AND lock_escalation_desc = 'DISABLE';
