-- native: count_state timed_out
/* queuetop */ SELECT COUNT(*) FROM [queuetop].[WorkQueue] WITH (NOLOCK) WHERE ([RetrievedDate] IS NOT NULL AND [TimeoutDate] < SYSUTCDATETIME()) AND [JobType] = CAST(? AS nvarchar(128));
