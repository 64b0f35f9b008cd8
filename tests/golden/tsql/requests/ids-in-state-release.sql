-- requests: ids_in_state release
/* queuetop */ SELECT TOP (?) [id], NULL FROM [dbo].[RequestsCompleted] WITH (NOLOCK) WHERE ([CompletedDate] IS NULL AND [RemovedDate] < DATEADD(millisecond, ?, GETDATE())) ORDER BY [id];
