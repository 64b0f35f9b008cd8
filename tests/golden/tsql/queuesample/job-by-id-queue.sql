-- queuesample: job_by_id queue
/* queuetop */ SELECT [WorkQueueID], [JobType], [JobInfo], [CreatedDate], [CreatedBy], [RetrievedDate], [RetrievedBy], CASE WHEN [RetrievedDate] IS NULL THEN 'pending' ELSE NULL END FROM [QueueSample].[WorkQueue] WITH (READPAST) WHERE [WorkQueueID] = CAST(? AS bigint);
