-- native: worker_completions
/* queuetop */ SELECT TOP (?) [RetrievedBy], [Outcome], [RetrievedDate], CASE WHEN [RetrievedDate] >= DATEADD(millisecond, ?, SYSUTCDATETIME()) THEN 1 ELSE 0 END, [CompletedDate] FROM [queuetop].[WorkCompleted] WITH (NOLOCK) WHERE [CompletedDate] > DATEADD(millisecond, ?, SYSUTCDATETIME()) ORDER BY [CompletedDate] DESC;
