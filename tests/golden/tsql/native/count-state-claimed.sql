-- native: count_state claimed
/* queuetop */ SELECT COUNT(*) FROM [queuetop].[WorkQueue] WITH (NOLOCK) WHERE ([RetrievedDate] IS NOT NULL AND [TimeoutDate] >= SYSUTCDATETIME()) AND [JobType] = CAST(? AS nvarchar(128));
