-- requests: move_insert seed's own claim (move)
/* queuetop */ INSERT INTO [dbo].[RequestsCompleted] ([id], [request], [InsertedDate], [RemovedDate]) VALUES (CAST(? AS uniqueidentifier), CAST(? AS varchar(512)), CAST(? AS datetime), GETDATE());
