-- native: release_timed_out one type (2)
/* queuetop */ WITH c AS (SELECT * FROM [queuetop].[WorkQueue] WITH (ROWLOCK, READPAST, UPDLOCK) WHERE [RetrievedDate] IS NOT NULL AND [TimeoutDate] < SYSUTCDATETIME() AND [Attempts] < ? AND [JobType] IN (CAST(? AS nvarchar(128)))) UPDATE c SET [RetrievedDate] = NULL, [RetrievedBy] = NULL, [ProcessingMark] = NULL, [TimeoutDate] = NULL;
