-- native: ids_in_state release
/* queuetop */ SELECT TOP (?) [WorkQueueID], [ProcessingMark] FROM [queuetop].[WorkQueue] WITH (NOLOCK) WHERE ([RetrievedDate] IS NOT NULL AND [TimeoutDate] < SYSUTCDATETIME()) AND [JobType] = CAST(? AS nvarchar(128)) ORDER BY [WorkQueueID];
