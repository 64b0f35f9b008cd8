-- queuesample: claim_one seed's own claim (update_top)
/* queuetop */ UPDATE TOP (1) [QueueSample].[WorkQueue_Pending] WITH (READPAST) SET [RetrievedDate] = GETDATE(), [RetrievedBy] = CAST(? AS uniqueidentifier) OUTPUT inserted.[WorkQueueID], inserted.[JobType], NULL AS qt_token, NULL AS qt_attempts WHERE ([RetrievedDate] IS NULL) AND [JobType] = CAST(? AS uniqueidentifier);
