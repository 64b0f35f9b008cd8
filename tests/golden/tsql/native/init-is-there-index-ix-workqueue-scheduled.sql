-- native: init: is there index IX_WorkQueue_Scheduled
SELECT 1 FROM sys.indexes WHERE object_id = OBJECT_ID(?) AND name = ?;
