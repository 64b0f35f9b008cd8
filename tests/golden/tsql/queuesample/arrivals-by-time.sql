-- queuesample: arrivals_by_time
/* queuetop */ SELECT [WorkQueueID], [JobType], [CreatedDate] FROM [QueueSample].[WorkQueue] WITH (NOLOCK) WHERE [CreatedDate] > CAST(? AS datetime);
