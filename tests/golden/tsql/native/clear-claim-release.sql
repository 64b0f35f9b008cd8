-- native: clear_claim release
/* queuetop */ UPDATE [queuetop].[WorkQueue] SET [RetrievedDate] = NULL, [RetrievedBy] = NULL, [ProcessingMark] = NULL, [TimeoutDate] = NULL WHERE [WorkQueueID] = CAST(? AS bigint) AND [ProcessingMark] = CAST(? AS uniqueidentifier) AND ([RetrievedDate] IS NOT NULL AND [TimeoutDate] < SYSUTCDATETIME()) AND [Attempts] < CAST(? AS int);
