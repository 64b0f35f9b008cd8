-- requests: count_state lost
/* queuetop */ SELECT COUNT(*) FROM [dbo].[RequestsCompleted] WITH (NOLOCK) WHERE ([CompletedDate] IS NULL AND [RemovedDate] < DATEADD(millisecond, ?, GETDATE()));
