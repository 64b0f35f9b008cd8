-- queuesample: create_tables demo: create (2 of 2)
/* queuetop */ CREATE VIEW [QueueSample].[WorkQueue_Pending] AS SELECT * FROM [QueueSample].[WorkQueue] WHERE [RetrievedDate] IS NULL;
