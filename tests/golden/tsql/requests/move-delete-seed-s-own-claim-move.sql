-- requests: move_delete seed's own claim (move)
/* queuetop */ DELETE FROM [dbo].[RequestsQueue] WHERE [id] = CAST(? AS uniqueidentifier);
