-- requests: finish seed's own completion
/* queuetop */ UPDATE [dbo].[RequestsCompleted] SET [CompletedDate] = GETDATE() WHERE [id] = CAST(? AS uniqueidentifier);
