-- queuesample: recent_completions
/* queuetop */ SELECT TOP (?) [WorkQueueID], [RetrievedDate], [CreatedDate], [RetrievedDate], NULL, NULL, NULL FROM [QueueSample].[WorkQueue] WITH (READPAST) WHERE [RetrievedDate] > CAST(? AS datetime) AND [JobType] = CAST(? AS uniqueidentifier) ORDER BY [RetrievedDate] DESC;
