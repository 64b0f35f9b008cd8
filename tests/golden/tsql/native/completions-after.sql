-- native: completions_after
/* queuetop */ SELECT [WorkQueueID], [JobType], [CompletedDate], [CreatedDate], [RetrievedDate], [RetrievedDate], [CompletedDate] FROM [queuetop].[WorkCompleted] WITH (NOLOCK) WHERE [CompletedDate] > CAST(? AS datetime2(3));
