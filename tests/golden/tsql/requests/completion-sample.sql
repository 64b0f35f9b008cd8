-- requests: completion_sample
/* queuetop */ SELECT TOP (?) NULL, [CompletedDate], [InsertedDate], [RemovedDate], [RemovedDate], [CompletedDate] FROM [dbo].[RequestsCompleted] WITH (NOLOCK) WHERE [CompletedDate] > CAST(? AS datetime) AND [CompletedDate] <= CAST(? AS datetime);
