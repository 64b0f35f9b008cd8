-- requests: insert
/* queuetop */ INSERT INTO [dbo].[RequestsQueue] ([request]) OUTPUT inserted.[id] VALUES (CAST(? AS varchar(512)));
