-- native: count_state scheduled
/* queuetop */ SELECT COUNT(*) FROM [queuetop].[WorkQueue] WITH (NOLOCK) WHERE ([RetrievedDate] IS NULL AND [AvailableDate] > SYSUTCDATETIME()) AND [JobType] = CAST(? AS nvarchar(128));
