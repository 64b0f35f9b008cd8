-- native: completion_sample
/* queuetop */ SELECT TOP (?) [JobType], [CompletedDate], [CreatedDate], [RetrievedDate], [RetrievedDate], [CompletedDate] FROM [queuetop].[WorkCompleted] WITH (NOLOCK) WHERE [CompletedDate] > CAST(? AS datetime2(3)) AND [CompletedDate] <= CAST(? AS datetime2(3)) AND NOT ([Outcome] = 'dead') AND (([WorkQueueID] % 65521) * 40503) % 65536 < ?;
