-- queuesample: completion_sample
/* queuetop */ SELECT TOP (?) [JobType], [RetrievedDate], [CreatedDate], [RetrievedDate], NULL, NULL FROM [QueueSample].[WorkQueue] WITH (NOLOCK) WHERE [RetrievedDate] > CAST(? AS datetime) AND [RetrievedDate] <= CAST(? AS datetime) AND (([WorkQueueID] % 65521) * 40503) % 65536 < ?;
