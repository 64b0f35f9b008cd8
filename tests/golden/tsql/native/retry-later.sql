-- native: retry_later
/* queuetop */ UPDATE [queuetop].[WorkQueue] SET [RetrievedDate] = NULL, [RetrievedBy] = NULL, [ProcessingMark] = NULL, [TimeoutDate] = NULL, [AvailableDate] = DATEADD(millisecond, ?, DATEADD(second, ?, SYSUTCDATETIME())) WHERE [WorkQueueID] = CAST(? AS bigint) AND [ProcessingMark] = CAST(? AS uniqueidentifier) AND [Attempts] < CAST(? AS int);
