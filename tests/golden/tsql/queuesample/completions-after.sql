-- queuesample: completions_after
/* queuetop */ SELECT [WorkQueueID], [JobType], [RetrievedDate], [CreatedDate], [RetrievedDate], NULL, NULL FROM [QueueSample].[WorkQueue] WITH (NOLOCK) WHERE [RetrievedDate] > CAST(? AS datetime);
