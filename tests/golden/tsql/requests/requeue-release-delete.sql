-- requests: requeue release delete
/* queuetop */ DELETE FROM [dbo].[RequestsCompleted] WHERE [id] IN (CAST(? AS uniqueidentifier), CAST(? AS uniqueidentifier)) AND ([CompletedDate] IS NULL AND [RemovedDate] < DATEADD(millisecond, ?, GETDATE()));
