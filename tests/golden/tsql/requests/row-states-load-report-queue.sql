-- requests: row_states load report: queue
/* queuetop */ SELECT [id], CASE WHEN 1 = 1 THEN 'pending' ELSE NULL END FROM [dbo].[RequestsQueue] WHERE [InsertedDate] >= DATEADD(millisecond, ?, GETDATE());
