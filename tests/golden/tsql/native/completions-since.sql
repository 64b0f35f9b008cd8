-- native: completions_since
/* queuetop */ SELECT [WorkQueueID], [JobType], [CreatedDate], [RetrievedDate], [CompletedDate], [Outcome] FROM [queuetop].[WorkCompleted] WITH (NOLOCK) WHERE [CompletedDate] > ?;
