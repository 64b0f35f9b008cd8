-- native: count_timed_out one type
/* queuetop */ SELECT COUNT(*) FROM [queuetop].[WorkQueue] WITH (NOLOCK) WHERE [RetrievedDate] IS NOT NULL AND [TimeoutDate] < SYSUTCDATETIME() AND [JobType] IN (CAST(? AS nvarchar(128)));
