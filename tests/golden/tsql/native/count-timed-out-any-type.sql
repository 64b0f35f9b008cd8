-- native: count_timed_out any type
/* queuetop */ SELECT COUNT(*) FROM [queuetop].[WorkQueue] WITH (NOLOCK) WHERE [RetrievedDate] IS NOT NULL AND [TimeoutDate] < SYSUTCDATETIME();
