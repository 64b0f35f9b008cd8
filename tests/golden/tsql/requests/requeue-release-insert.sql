-- requests: requeue release insert
/* queuetop */ INSERT INTO [dbo].[RequestsQueue] ([id], [request], [InsertedDate]) SELECT [id], [request], [InsertedDate] FROM [dbo].[RequestsCompleted] WHERE [id] IN (CAST(? AS uniqueidentifier), CAST(? AS uniqueidentifier)) AND ([CompletedDate] IS NULL AND [RemovedDate] < DATEADD(millisecond, ?, GETDATE()));
