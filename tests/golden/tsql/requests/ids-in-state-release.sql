-- requests: ids_in_state release
/* queuetop */ SELECT TOP (?) [id], NULL FROM [dbo].[RequestsCompleted] WHERE ([CompletedDate] IS NULL AND [RemovedDate] < DATEADD(millisecond, ?, GETDATE())) ORDER BY [id];
