-- native: init: create view WorkQueue_Pending
/* queuetop */ 
                CREATE VIEW [queuetop].[WorkQueue_Pending] AS SELECT * FROM [queuetop].[WorkQueue] WHERE [RetrievedDate] IS NULL;
