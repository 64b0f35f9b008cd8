-- queuesample: job_rows pending, first page
/* queuetop */ SELECT TOP (?) [WorkQueueID], [JobType], [JobInfo], [CreatedDate], [CreatedBy], [RetrievedDate], [RetrievedBy] FROM [QueueSample].[WorkQueue] WITH (READPAST) WHERE ([RetrievedDate] IS NULL) AND [JobType] = CAST(? AS uniqueidentifier) ORDER BY [CreatedDate], [WorkQueueID];
