-- native: count_completed_between
/* queuetop */ SELECT COUNT(*) FROM [queuetop].[WorkCompleted] WITH (NOLOCK) WHERE [CompletedDate] > ? AND [CompletedDate] <= ?;
