-- queuesample: insert through a table variable
/* queuetop */ DECLARE @qt_out TABLE (qt_0 bigint); INSERT INTO [QueueSample].[WorkQueue] ([JobType], [JobInfo]) OUTPUT inserted.[WorkQueueID] INTO @qt_out VALUES (CAST(? AS uniqueidentifier), CAST(? AS xml)); SELECT * FROM @qt_out;
